//! Collision stage: shapes, support maps, GJK, EPA, broad phase, contacts.
