//! The addresses of the metadata resources, by names (or by RIDs, as the
//! store resolves either). An item's and its container's are in
//! `items.rs`; an offer is addressed by its RID alone.

use crate::store::ScriptKind;

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
