//! The key-name table and the chord parser (filled in with the input work).
