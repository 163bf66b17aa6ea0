//! holm-cli (to come).
