//! holm-testkit (to come).
