//! holm-client (to come).
