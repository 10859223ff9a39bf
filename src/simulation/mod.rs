//! Time stepping, scenarios, recording and sweeps.
