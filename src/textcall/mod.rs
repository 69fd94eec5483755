//! The `<tool_call>` text parser (in progress).
