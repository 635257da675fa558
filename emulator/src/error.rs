//! The one wire format of failures: the Cosmos status code with a JSON body
//! `{"code": ..., "message": ...}` and, where one applies, `x-ms-substatus`.
//! Every layer refuses with an [`ApiError`]; `http/response.rs` writes it.

use http::StatusCode;
use serde_json::{json, Value};

/// A refusal, as the client will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    pub substatus: Option<u32>,
    /// `additionalErrorInfo`: JSON text the SDK reads from some refusals
    /// (the query plan, in a cross-partition query the gateway cannot serve).
    pub additional_info: Option<String>,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            substatus: None,
            additional_info: None,
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }

    pub fn not_found() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "Entity with the specified id does not exist in the system.",
        )
    }

    pub fn conflict() -> Self {
        Self::new(
            StatusCode::CONFLICT,
            "Entity with the specified id already exists in the system.",
        )
    }

    pub fn precondition_failed() -> Self {
        Self::new(
            StatusCode::PRECONDITION_FAILED,
            "Operation cannot be performed because one of the specified precondition is not met.",
        )
    }

    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, message)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
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
        match self.status {
            StatusCode::BAD_REQUEST => "BadRequest",
            StatusCode::UNAUTHORIZED => "Unauthorized",
            StatusCode::FORBIDDEN => "Forbidden",
            StatusCode::NOT_FOUND => "NotFound",
            StatusCode::METHOD_NOT_ALLOWED => "MethodNotAllowed",
            StatusCode::CONFLICT => "Conflict",
            StatusCode::GONE => "Gone",
            StatusCode::PRECONDITION_FAILED => "PreconditionFailed",
            StatusCode::PAYLOAD_TOO_LARGE => "RequestEntityTooLarge",
            StatusCode::REQUEST_TIMEOUT => "RequestTimeout",
            _ if self.status.as_u16() == 449 => "RetryWith",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "UnsupportedMediaType",
            StatusCode::TOO_MANY_REQUESTS => "TooManyRequests",
            StatusCode::SERVICE_UNAVAILABLE => "ServiceUnavailable",
            _ => "InternalServerError",
        }
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

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
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
