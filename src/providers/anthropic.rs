//! Provider `anthropic`: encode and decode (stub until its issue lands).

use crate::http::HttpResponse;
use crate::model::{ChatRequest, Outcome};
use crate::providers::{DecodeError, EncodeError, Encoded};

pub fn encode(_req: &ChatRequest) -> Result<Encoded, EncodeError> {
    Err(EncodeError::new(
        "NOT_IMPLEMENTED",
        "anthropic encoder is not implemented yet",
    ))
}

pub fn decode(_req: &ChatRequest, _resp: &HttpResponse) -> Result<Outcome, DecodeError> {
    Err(DecodeError::new("anthropic decoder is not implemented yet"))
}

/// Push-based stream decoder.
pub struct Stream {
    req: ChatRequest,
}

impl Stream {
    pub fn new(req: &ChatRequest) -> Stream {
        Stream { req: req.clone() }
    }

    pub fn request(&self) -> ChatRequest {
        self.req.clone()
    }

    pub fn push(&mut self, _bytes: &[u8]) -> Result<(), DecodeError> {
        Ok(())
    }

    pub fn finish(self) -> Result<Outcome, DecodeError> {
        Err(DecodeError::new(
            "anthropic stream decoder is not implemented yet",
        ))
    }
}
