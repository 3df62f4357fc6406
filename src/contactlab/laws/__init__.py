"""Contact laws: compiled pure functions with their parameter and history schemas."""
