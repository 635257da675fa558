//! The one wire format of failures: the Cosmos status code with a JSON body
//! `{"code": ..., "message": ...}` and, where one applies, `x-ms-substatus`.
//! Every layer refuses with an [`ApiError`]; `http/response.rs` writes it.
//!
//! A Cosmos status is a number that HTTP and the binary Direct-mode
//! protocol (RNTBD) share, so it is our own [`Status`], not the `http`
//! crate's: only the HTTP adapter (`http/`) turns it into a status line.

use std::fmt;

use serde_json::{json, Value};

/// A Cosmos status: the number (200, 404, 449...) both protocols carry.
/// Always 100 to 999, as an HTTP status line can hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Status(u16);

impl Status {
    pub const OK: Status = Status(200);
    pub const CREATED: Status = Status(201);
    pub const NO_CONTENT: Status = Status(204);
    /// A transactional batch or bulk answer with mixed outcomes.
    pub const MULTI_STATUS: Status = Status(207);
    pub const NOT_MODIFIED: Status = Status(304);
    pub const BAD_REQUEST: Status = Status(400);
    pub const UNAUTHORIZED: Status = Status(401);
    pub const FORBIDDEN: Status = Status(403);
    pub const NOT_FOUND: Status = Status(404);
    pub const METHOD_NOT_ALLOWED: Status = Status(405);
    pub const REQUEST_TIMEOUT: Status = Status(408);
    pub const CONFLICT: Status = Status(409);
    pub const GONE: Status = Status(410);
    pub const PRECONDITION_FAILED: Status = Status(412);
    /// `RequestEntityTooLarge`.
    pub const PAYLOAD_TOO_LARGE: Status = Status(413);
    pub const UNSUPPORTED_MEDIA_TYPE: Status = Status(415);
    /// A batch's operation not run because another one failed.
    pub const FAILED_DEPENDENCY: Status = Status(424);
    pub const TOO_MANY_REQUESTS: Status = Status(429);
    /// Cosmos's own: retry the request (a script that lost to concurrent
    /// writers, a partition being moved).
    pub const RETRY_WITH: Status = Status(449);
    pub const INTERNAL_SERVER_ERROR: Status = Status(500);
    pub const SERVICE_UNAVAILABLE: Status = Status(503);

    /// The status `code`, known to be 100 to 999 (a constant, a status a
    /// rule was checked to hold); panics otherwise. Numbers from a request
    /// go through [`Status::from_u16`].
    pub const fn new(code: u16) -> Status {
        assert!(100 <= code && code <= 999, "a status is 100 to 999");
        Status(code)
    }

    /// The status `code`, if it is one (100 to 999).
    pub fn from_u16(code: u16) -> Option<Status> {
        (100..=999).contains(&code).then_some(Status(code))
    }

    pub const fn as_u16(self) -> u16 {
        self.0
    }

    /// 400 and above: a refusal or a failure.
    pub const fn is_failure(self) -> bool {
        self.0 >= 400
    }

    /// The name a refusal's JSON body carries as its `code`, e.g.
    /// `BadRequest`; a status without a name of its own is
    /// `InternalServerError`.
    pub const fn code(self) -> &'static str {
        match self.0 {
            400 => "BadRequest",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "NotFound",
            405 => "MethodNotAllowed",
            408 => "RequestTimeout",
            409 => "Conflict",
            410 => "Gone",
            412 => "PreconditionFailed",
            413 => "RequestEntityTooLarge",
            415 => "UnsupportedMediaType",
            429 => "TooManyRequests",
            449 => "RetryWith",
            503 => "ServiceUnavailable",
            _ => "InternalServerError",
        }
    }
}

impl PartialEq<u16> for Status {
    fn eq(&self, other: &u16) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A refusal, as the client will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: Status,
    pub message: String,
    pub substatus: Option<u32>,
    /// `additionalErrorInfo`: JSON text the SDK reads from some refusals
    /// (the query plan, in a cross-partition query the gateway cannot serve).
    pub additional_info: Option<String>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: Status, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            substatus: None,
            additional_info: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(Status::BAD_REQUEST, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(Status::UNAUTHORIZED, message)
    }

    pub fn not_found() -> Self {
        Self::new(
            Status::NOT_FOUND,
            "Entity with the specified id does not exist in the system.",
        )
    }

    pub fn conflict() -> Self {
        Self::new(
            Status::CONFLICT,
            "Entity with the specified id already exists in the system.",
        )
    }

    pub fn precondition_failed() -> Self {
        Self::new(
            Status::PRECONDITION_FAILED,
            "Operation cannot be performed because one of the specified precondition is not met.",
        )
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(Status::PAYLOAD_TOO_LARGE, message)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            Status::METHOD_NOT_ALLOWED,
            "The requested verb is not supported on this resource.",
        )
    }

    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    pub fn with_substatus(mut self, substatus: u32) -> Self {
        self.substatus = Some(substatus);
        self
    }

    /// The Cosmos name of the status, e.g. `BadRequest`.
    pub fn code(&self) -> &'static str {
        self.status.code()
    }

    /// The JSON body the client reads: `code`, `message` and, for some
    /// refusals, `additionalErrorInfo`.
    pub fn body(&self) -> Value {
        let mut body = json!({ "code": self.code(), "message": self.message });
        if let Some(info) = &self.additional_info {
            body["additionalErrorInfo"] = info.as_str().into();
        }
        body
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {}: {}",
            self.status.as_u16(),
            self.code(),
            self.message
        )
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_is_a_number_and_the_name_of_a_refusal() {
        assert_eq!(Status::NOT_FOUND.as_u16(), 404);
        assert_eq!(Status::NOT_FOUND, 404);
        assert_eq!(Status::new(449), Status::RETRY_WITH);
        assert_eq!(Status::RETRY_WITH.code(), "RetryWith");
        assert_eq!(Status::PAYLOAD_TOO_LARGE.code(), "RequestEntityTooLarge");
        // A fault rule's status without a name of its own.
        assert_eq!(Status::new(502).code(), "InternalServerError");
        assert_eq!(Status::from_u16(99), None);
        assert_eq!(Status::from_u16(1000), None);
        assert_eq!(Status::from_u16(599), Some(Status::new(599)));
        assert!(Status::FAILED_DEPENDENCY.is_failure());
        assert!(!Status::NOT_MODIFIED.is_failure());
    }

    #[test]
    fn a_refusal_reads_as_its_number_name_and_message() {
        let error = ApiError::new(Status::new(449), "again").with_substatus(5352);
        assert_eq!(error.to_string(), "449 RetryWith: again");
        assert_eq!(
            error.body(),
            json!({ "code": "RetryWith", "message": "again" })
        );
    }
}
