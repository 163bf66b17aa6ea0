//! holm (to come).
