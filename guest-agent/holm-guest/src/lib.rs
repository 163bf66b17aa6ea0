//! holm-guest (to come).
