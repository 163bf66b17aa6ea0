//! holmd (to come).
