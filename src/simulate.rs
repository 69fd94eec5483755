//! The provider simulator: a loopback HTTP server answering like the real APIs (stub).
