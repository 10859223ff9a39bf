//! Rigid-body algorithms on a [`crate::model::Model`]: kinematics, CRBA, RNEA, ABA, Jacobians.
