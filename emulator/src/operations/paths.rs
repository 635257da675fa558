//! The addresses of resources, by names (or by RIDs, as the store
//! resolves either): a container, an item, and the metadata resources. An
//! offer is addressed by its RID alone.

use crate::data::store::ScriptKind;

/// A container, by names (or by RIDs: `dbs/{rid}/colls/{rid}`).
#[derive(Debug, Clone, Copy)]
pub struct ContainerPath<'a> {
    pub database: &'a str,
    pub container: &'a str,
}

/// An item: its container and its id (or RID).
#[derive(Debug, Clone, Copy)]
pub struct ItemPath<'a> {
    pub database: &'a str,
    pub container: &'a str,
    pub id: &'a str,
}

impl<'a> ItemPath<'a> {
    /// Its container.
    pub fn container(self) -> ContainerPath<'a> {
        ContainerPath {
            database: self.database,
            container: self.container,
        }
    }
}

/// A database.
#[derive(Debug, Clone, Copy)]
pub struct DatabasePath<'a> {
    pub database: &'a str,
}

/// A user of a database.
#[derive(Debug, Clone, Copy)]
pub struct UserPath<'a> {
    pub database: &'a str,
    pub user: &'a str,
}

/// A permission of a user.
#[derive(Debug, Clone, Copy)]
pub struct PermissionPath<'a> {
    pub database: &'a str,
    pub user: &'a str,
    pub id: &'a str,
}

/// A stored procedure, trigger or user-defined function of a container.
#[derive(Debug, Clone, Copy)]
pub struct ScriptPath<'a> {
    pub database: &'a str,
    pub container: &'a str,
    pub kind: ScriptKind,
    pub id: &'a str,
}

/// A client encryption key of a database.
#[derive(Debug, Clone, Copy)]
pub struct KeyPath<'a> {
    pub database: &'a str,
    pub id: &'a str,
}

/// A conflict of a container.
#[derive(Debug, Clone, Copy)]
pub struct ConflictPath<'a> {
    pub database: &'a str,
    pub container: &'a str,
    pub id: &'a str,
}
