//! Unit tests of the MCP verdicts on handwritten schemas.
