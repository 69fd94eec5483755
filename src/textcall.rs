//! The `<tool_call>` text parser (stub until the text-protocol issue lands).
