//! The script operations of the store: create, read, replace, delete and
//! list a container's stored procedures, triggers and user-defined
//! functions (`script.rs` is what a script is and how its body is checked).

use serde_json::{Map, Value};

use super::checks::check_if_match;
use super::script::{parse, Script, ScriptCounts, ScriptKind, ScriptView, Scripts};
use super::{Container, CreateMode, Store, Written};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::rid;

/// The container's RID link, which scripts' `_self` extend.
fn owner(container: &Container) -> String {
    let (database, _) = container.numbers();
    format!("dbs/{}/colls/{}", rid::database(database), container.rid)
}

/// A container's scripts, and the link their `_self` extend.
fn scripts_of(container: &Container) -> (&Scripts, String) {
    (&container.scripts, owner(container))
}

impl Store {
    /// Creates a script (or with [`CreateMode::Upsert`] replaces the one of
    /// that id, keeping its RID), and says which it did. 409 if the id is
    /// taken and the mode is `Create`.
    pub fn create_script(
        &self,
        database: &str,
        container: &str,
        kind: ScriptKind,
        body: &Map<String, Value>,
        mode: CreateMode,
    ) -> ApiResult<(Written, ScriptView)> {
        let parsed = parse(kind, body)?;
        let id = parsed.id.clone();
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let c = catalog.database_mut(database)?.container_mut(container)?;
        let (owner, numbers) = (owner(c), c.numbers());
        let scripts = &mut c.scripts;
        let written = if let Some(existing) = scripts.of_mut(kind).get_mut(&id) {
            if mode == CreateMode::Create {
                return Err(ApiError::conflict());
            }
            existing.update(parsed, now);
            Written::Replaced
        } else {
            let rid = kind.rid(numbers, scripts.next_number(kind));
            let script = Script::new(parsed, rid, now);
            scripts.of_mut(kind).insert(id.clone(), script);
            Written::Created
        };
        let view = ScriptView {
            json: scripts.of(kind)[&id].to_json(kind, &owner),
            counts: scripts.counts(),
        };
        catalog.meta_changed();
        self.wrote();
        Ok((written, view))
    }

    /// A script as served, with its container's counts; 404 if absent.
    pub fn script_view(
        &self,
        database: &str,
        container: &str,
        kind: ScriptKind,
        id: &str,
    ) -> ApiResult<ScriptView> {
        let catalog = self.read();
        let (scripts, owner) = scripts_of(catalog.database(database)?.container(container)?);
        Ok(ScriptView {
            json: scripts.get(kind, id)?.to_json(kind, &owner),
            counts: scripts.counts(),
        })
    }

    /// The container's RID and its scripts of one kind, as served.
    pub fn script_feed(
        &self,
        database: &str,
        container: &str,
        kind: ScriptKind,
    ) -> ApiResult<(String, Vec<Value>)> {
        let catalog = self.read();
        let container = catalog.database(database)?.container(container)?;
        let (scripts, owner) = scripts_of(container);
        let values = scripts
            .of(kind)
            .values()
            .map(|s| s.to_json(kind, &owner))
            .collect();
        Ok((container.rid.clone(), values))
    }

    /// How many scripts of each kind the container holds.
    pub fn script_counts(&self, database: &str, container: &str) -> ApiResult<ScriptCounts> {
        let catalog = self.read();
        let container = catalog.database(database)?.container(container)?;
        Ok(container.scripts.counts())
    }

    /// Replaces a script: a body with another id renames it (409 if that
    /// id is taken); its RID stays.
    pub fn replace_script(
        &self,
        database: &str,
        container: &str,
        kind: ScriptKind,
        id: &str,
        body: &Map<String, Value>,
        if_match: Option<&str>,
    ) -> ApiResult<ScriptView> {
        let parsed = parse(kind, body)?;
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let c = catalog.database_mut(database)?.container_mut(container)?;
        let owner = owner(c);
        let scripts = &mut c.scripts;
        let current = scripts.get(kind, id)?;
        check_if_match(if_match, &current.etag)?;
        let current_id = current.id.clone();
        let map = scripts.of_mut(kind);
        if parsed.id != current_id && map.contains_key(&parsed.id) {
            return Err(ApiError::conflict());
        }
        let mut script = map.remove(&current_id).expect("resolved");
        let new_id = parsed.id.clone();
        script.update(parsed, now);
        let json = script.to_json(kind, &owner);
        map.insert(new_id, script);
        let view = ScriptView {
            json,
            counts: scripts.counts(),
        };
        catalog.meta_changed();
        self.wrote();
        Ok(view)
    }

    pub fn delete_script(
        &self,
        database: &str,
        container: &str,
        kind: ScriptKind,
        id: &str,
        if_match: Option<&str>,
    ) -> ApiResult<()> {
        let mut catalog = self.write()?;
        let scripts = &mut catalog
            .database_mut(database)?
            .container_mut(container)?
            .scripts;
        let script = scripts.get(kind, id)?;
        check_if_match(if_match, &script.etag)?;
        let name = script.id.clone();
        scripts.of_mut(kind).remove(&name);
        catalog.meta_changed();
        self.wrote();
        Ok(())
    }

    /// One script, by id or RID; 404 if the database, the container or the
    /// script is absent.
    pub fn script(
        &self,
        database: &str,
        container: &str,
        kind: ScriptKind,
        id: &str,
    ) -> ApiResult<Script> {
        let catalog = self.read();
        let (scripts, _) = scripts_of(catalog.database(database)?.container(container)?);
        scripts.get(kind, id).cloned()
    }

    /// The container's scripts of one kind, by id.
    pub fn scripts(
        &self,
        database: &str,
        container: &str,
        kind: ScriptKind,
    ) -> ApiResult<Vec<Script>> {
        let catalog = self.read();
        let (scripts, _) = scripts_of(catalog.database(database)?.container(container)?);
        Ok(scripts.of(kind).values().cloned().collect())
    }
}
