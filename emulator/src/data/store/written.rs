//! A write of a resource by its id, both ways round: how it treats one
//! already there ([`CreateMode`]), and what it did ([`Written`]): created
//! the resource, or replaced the one there. The store says it in its own
//! words; a protocol answers it (HTTP with 201 Created or 200 OK,
//! `http/response.rs`).

use crate::protocol::error::Status;

/// How a write treats an existing resource of the same id: refuses it
/// (409) or replaces it (an upsert).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    Create,
    Upsert,
}

/// What a write did: a create, or an upsert of a new id, `Created`; a
/// replace, a patch, or an upsert of an existing id, `Replaced`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    Replaced,
}

impl Written {
    /// The status the service answers it with: 201 for a resource created,
    /// 200 for one replaced.
    pub const fn status(self) -> Status {
        match self {
            Written::Created => Status::CREATED,
            Written::Replaced => Status::OK,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_answers_201_when_it_created_and_200_when_it_replaced() {
        assert_eq!(Written::Created.status(), 201);
        assert_eq!(Written::Replaced.status(), 200);
    }
}
