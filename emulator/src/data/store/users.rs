//! Users and their permissions, kept in their database: deleting the
//! database deletes them. A permission grants `All` or `Read` on one
//! container, optionally one logical partition of it, one item, or one
//! script (stored procedure, trigger, user-defined function); what it
//! grants is resolved to the container's RID (and a script's RID) when it
//! is written, so that a container or script deleted and created again
//! under the same name is not covered.
//!
//! The user and permission types are `user.rs`, which the catalog owns;
//! this file is what the store does with them.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::catalog::{Catalog, Database};
use super::checks::check_if_match;
use super::lookup::{by_name_or_rid, by_name_or_rid_mut};
use super::user::{Grant, Permission, PermissionMode, PermissionView, ScriptGrant, User};
use super::ScriptKind;
use super::{item, validate_name, CreateMode, Store, Written};
use crate::protocol::error::{ApiError, ApiResult};
use crate::protocol::rid;

impl Database {
    fn user(&self, id: &str) -> ApiResult<&User> {
        by_name_or_rid(&self.users, id, |u| &u.rid, "user")
    }

    fn user_mut(&mut self, id: &str) -> ApiResult<&mut User> {
        by_name_or_rid_mut(&mut self.users, id, |u| &u.rid, "user")
    }

    /// Resolves a permission's `resource` (name- or RID-based, with or
    /// without slashes around it) to the container and item or script it
    /// names.
    fn grant_for(
        &self,
        mode: PermissionMode,
        resource: &str,
        partition_key: Option<&Value>,
    ) -> ApiResult<Grant> {
        let invalid = |why: &str| {
            ApiError::bad_request(format!(
                "The input content is invalid: 'resource' '{resource}' {why}. A permission's resource \
                 is a container 'dbs/{{db}}/colls/{{coll}}', an item \
                 'dbs/{{db}}/colls/{{coll}}/docs/{{id}}' or a script \
                 'dbs/{{db}}/colls/{{coll}}/sprocs|triggers|udfs/{{id}}' of the user's database."
            ))
        };
        let segments: Vec<&str> = resource.split('/').filter(|s| !s.is_empty()).collect();
        let (item_id, script) = match segments.as_slice() {
            ["dbs", _, "colls", _] => (None, None),
            ["dbs", _, "colls", _, "docs", id] => (Some(*id), None),
            ["dbs", _, "colls", _, kind, id] => match ScriptKind::from_segment(kind) {
                Some(kind) => (None, Some((kind, *id))),
                None => return Err(invalid("is not a link to a container, an item or a script")),
            },
            _ => return Err(invalid("is not a link to a container, an item or a script")),
        };
        let (database, container) = (segments[1], segments[3]);
        // The service takes a link of RIDs as it is, resolved or not (the
        // SDKs' tests create permissions on "dbs/AQAAAA==/colls/AQAAAJ0fgTc=",
        // "a random one"); it then grants nothing that exists.
        let unresolved_rids = rid::looks_like_container_rid(database, container)
            && (database != self.rid || self.container(container).is_err());
        if unresolved_rids {
            return Ok(Grant {
                mode,
                database_rid: database.to_string(),
                container_rid: container.to_string(),
                item_id: item_id.map(str::to_string),
                partition_key: None,
                script: script.map(|(kind, rid)| ScriptGrant {
                    kind,
                    rid: rid.to_string(),
                }),
            });
        }
        if database != self.id && database != self.rid {
            return Err(invalid("is not in the user's database"));
        }
        let container = self.container(container)?;
        // An item may be named by its RID, as its `_self` does.
        let item_id = item_id.map(|id| {
            container
                .key_by_rid(id)
                .map_or_else(|| id.to_string(), |key| key.id().to_string())
        });
        // A script must exist (by id or RID): the grant holds its RID.
        let script = script
            .map(|(kind, id)| {
                container.scripts.rid_of(kind, id).map(|rid| ScriptGrant {
                    kind,
                    rid: rid.to_string(),
                })
            })
            .transpose()?;
        let partition_key = match partition_key {
            None | Some(Value::Null) => None,
            Some(pk @ Value::Array(_)) => {
                Some(container.partition_key().key_from_header(&pk.to_string())?)
            }
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "The input content is invalid: 'resourcePartitionKey' must be a partition key \
                     value in an array, e.g. [\"value\"], got {other}."
                )))
            }
        };
        Ok(Grant {
            mode,
            database_rid: self.rid.clone(),
            container_rid: container.rid.clone(),
            item_id,
            partition_key,
            script,
        })
    }
}

impl Store {
    // ---- users -----------------------------------------------------------

    pub fn create_user(
        &self,
        database: &str,
        body: &Map<String, Value>,
        write: CreateMode,
    ) -> ApiResult<(Written, Value)> {
        let id = validate_name(body.get("id"))?.to_string();
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        if let Some(existing) = db.users.get_mut(&id) {
            if write == CreateMode::Create {
                return Err(ApiError::conflict());
            }
            // A user holds nothing but its id: an upsert only touches it.
            existing.ts = now;
            existing.etag = item::new_etag();
            let json = existing.to_json(&db.rid);
            catalog.meta_changed();
            self.wrote();
            return Ok((Written::Replaced, json));
        }
        db.next_user += 1;
        let user = User {
            rid: rid::user(db.number, db.next_user),
            number: db.next_user,
            id: id.clone(),
            ts: now,
            etag: item::new_etag(),
            permissions: BTreeMap::new(),
            next_permission: 0,
        };
        let json = user.to_json(&db.rid);
        db.users.insert(id, user);
        catalog.meta_changed();
        self.wrote();
        Ok((Written::Created, json))
    }

    pub fn user(&self, database: &str, id: &str) -> ApiResult<Value> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        Ok(db.user(id)?.to_json(&db.rid))
    }

    /// The database's RID and its users.
    pub fn users(&self, database: &str) -> ApiResult<(String, Vec<Value>)> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        let users = db.users.values().map(|u| u.to_json(&db.rid)).collect();
        Ok((db.rid.clone(), users))
    }

    /// Replaces a user: the body's id renames it.
    pub fn replace_user(
        &self,
        database: &str,
        id: &str,
        body: &Map<String, Value>,
        if_match: Option<&str>,
    ) -> ApiResult<Value> {
        let new_id = validate_name(body.get("id"))?.to_string();
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        let old_id = db.user(id)?.id.clone();
        check_if_match(if_match, &db.user(id)?.etag)?;
        if new_id != old_id && db.users.contains_key(&new_id) {
            return Err(ApiError::conflict());
        }
        let mut user = db.users.remove(&old_id).expect("resolved");
        user.id = new_id.clone();
        user.ts = now;
        user.etag = item::new_etag();
        let json = user.to_json(&db.rid);
        db.users.insert(new_id, user);
        catalog.meta_changed();
        self.wrote();
        Ok(json)
    }

    pub fn delete_user(&self, database: &str, id: &str, if_match: Option<&str>) -> ApiResult<()> {
        let mut catalog = self.write()?;
        let db = catalog.database_mut(database)?;
        let user = db.user(id)?;
        check_if_match(if_match, &user.etag)?;
        let name = user.id.clone();
        db.users.remove(&name);
        catalog.meta_changed();
        self.wrote();
        Ok(())
    }

    // ---- permissions -----------------------------------------------------

    /// Creates (or upserts) a permission, and says which it did.
    pub fn create_permission(
        &self,
        database: &str,
        user: &str,
        body: &Map<String, Value>,
        write: CreateMode,
    ) -> ApiResult<(Written, PermissionView)> {
        let id = validate_name(body.get("id"))?.to_string();
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let exists = catalog
            .database(database)?
            .user(user)?
            .permissions
            .contains_key(&id);
        if exists {
            if write == CreateMode::Create {
                return Err(ApiError::conflict());
            }
            drop(catalog);
            let replaced = self.replace_permission(database, user, &id, body, None)?;
            return Ok((Written::Replaced, replaced));
        }
        let Parsed {
            grant,
            resource,
            resource_partition_key,
            mode_as_sent,
        } = parse_permission(&catalog, database, body)?;
        let db = catalog.database_mut(database)?;
        let (db_number, db_rid) = (db.number, db.rid.clone());
        let user = db.user_mut(user)?;
        check_one_permission_per_resource(user, &id, &grant)?;
        user.next_permission += 1;
        let permission = Permission {
            rid: rid::permission(db_number, user.number, user.next_permission),
            id: id.clone(),
            ts: now,
            etag: item::new_etag(),
            resource,
            resource_partition_key,
            mode_as_sent,
            grant,
        };
        let view = permission.view(&db_rid, &user.rid);
        user.permissions.insert(id, permission);
        catalog.meta_changed();
        self.wrote();
        Ok((Written::Created, view))
    }

    pub fn permission(&self, database: &str, user: &str, id: &str) -> ApiResult<PermissionView> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        let user = db.user(user)?;
        Ok(user.permission(id)?.view(&db.rid, &user.rid))
    }

    /// The user's RID and its permissions.
    pub fn permissions(
        &self,
        database: &str,
        user: &str,
    ) -> ApiResult<(String, Vec<PermissionView>)> {
        let catalog = self.read();
        let db = catalog.database(database)?;
        let user = db.user(user)?;
        let views = user
            .permissions
            .values()
            .map(|p| p.view(&db.rid, &user.rid))
            .collect();
        Ok((user.rid.clone(), views))
    }

    pub fn replace_permission(
        &self,
        database: &str,
        user: &str,
        id: &str,
        body: &Map<String, Value>,
        if_match: Option<&str>,
    ) -> ApiResult<PermissionView> {
        let body_id = validate_name(body.get("id"))?.to_string();
        let now = self.clock.now();
        let mut catalog = self.write()?;
        let Parsed {
            grant,
            resource,
            resource_partition_key,
            mode_as_sent,
        } = parse_permission(&catalog, database, body)?;
        let db = catalog.database_mut(database)?;
        let db_rid = db.rid.clone();
        let user = db.user_mut(user)?;
        let permission = user.permission(id)?;
        let current_id = permission.id.clone();
        check_if_match(if_match, &permission.etag)?;
        // A body with another id renames the permission, as a user's
        // replace renames the user (the SDKs' test_permission_crud).
        if body_id != current_id && user.permissions.contains_key(&body_id) {
            return Err(ApiError::conflict());
        }
        check_one_permission_per_resource(user, &current_id, &grant)?;
        let mut permission = user.permissions.remove(&current_id).expect("resolved");
        permission.id = body_id.clone();
        permission.grant = grant;
        permission.resource = resource;
        permission.resource_partition_key = resource_partition_key;
        permission.mode_as_sent = mode_as_sent;
        permission.ts = now;
        permission.etag = item::new_etag();
        let view = permission.view(&db_rid, &user.rid);
        user.permissions.insert(body_id, permission);
        catalog.meta_changed();
        self.wrote();
        Ok(view)
    }

    pub fn delete_permission(
        &self,
        database: &str,
        user: &str,
        id: &str,
        if_match: Option<&str>,
    ) -> ApiResult<()> {
        let mut catalog = self.write()?;
        let user = catalog.database_mut(database)?.user_mut(user)?;
        let permission = user.permission(id)?;
        check_if_match(if_match, &permission.etag)?;
        let name = permission.id.clone();
        user.permissions.remove(&name);
        catalog.meta_changed();
        self.wrote();
        Ok(())
    }

    // ---- what resource tokens are checked against --------------------------

    /// The RIDs of the database and container a request path names, when
    /// both exist.
    pub fn container_rids(&self, database: &str, container: &str) -> Option<(String, String)> {
        let catalog = self.read();
        let db = catalog.database(database).ok()?;
        let container = db.container(container).ok()?;
        Some((db.rid.clone(), container.rid.clone()))
    }

    /// The canonical form of a partition key header in a container.
    pub fn canonical_partition_key(
        &self,
        database: &str,
        container: &str,
        header: &str,
    ) -> Option<String> {
        let catalog = self.read();
        let container = catalog.database(database).ok()?.container(container).ok()?;
        container.partition_key().key_from_header(header).ok()
    }

    /// The id of the item with RID `item_rid`, for RID-based item paths.
    pub fn item_id_by_rid(
        &self,
        database: &str,
        container: &str,
        item_rid: &str,
    ) -> Option<String> {
        let catalog = self.read();
        let container = catalog.database(database).ok()?.container(container).ok()?;
        container.key_by_rid(item_rid).map(|k| k.id().to_string())
    }
}

/// A permission's body, checked and resolved: what it grants and its
/// fields as sent.
struct Parsed {
    grant: Grant,
    resource: String,
    resource_partition_key: Option<Value>,
    mode_as_sent: String,
}

fn parse_permission(
    catalog: &Catalog,
    database: &str,
    body: &Map<String, Value>,
) -> ApiResult<Parsed> {
    let mode = PermissionMode::parse(body.get("permissionMode"))?;
    let Some(resource) = body.get("resource").and_then(Value::as_str) else {
        return Err(ApiError::bad_request(
            "The input content is invalid: a permission needs 'id', 'permissionMode' and \
             'resource' (e.g. \"dbs/db/colls/c\"); 'resource' is missing or not a string.",
        ));
    };
    let partition_key = body
        .get("resourcePartitionKey")
        .filter(|v| !v.is_null())
        .cloned();
    let grant = catalog
        .database(database)?
        .grant_for(mode, resource, partition_key.as_ref())?;
    Ok(Parsed {
        grant,
        resource: resource.to_string(),
        resource_partition_key: partition_key,
        mode_as_sent: body["permissionMode"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    })
}

/// The service gives a user one permission per resource: a second is a 409.
fn check_one_permission_per_resource(user: &User, id: &str, grant: &Grant) -> ApiResult<()> {
    let taken = user.permissions.values().find(|p| {
        p.id != id
            && p.grant.container_rid == grant.container_rid
            && p.grant.item_id == grant.item_id
            && p.grant.partition_key == grant.partition_key
            && p.grant.script == grant.script
    });
    match taken {
        Some(other) => Err(ApiError::conflict().with_message(format!(
            "The user already has the permission '{}' on the resource '{}': a user may hold one \
             permission per resource. Replace that permission instead.",
            other.id, other.resource
        ))),
        None => Ok(()),
    }
}
