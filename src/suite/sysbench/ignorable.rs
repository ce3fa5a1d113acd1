//! Which engine refusals restart a sysbench event rather than fail it.

use crate::engine::Meaning;

/// What sysbench's PostgreSQL driver always treats as ignorable (its
/// SQLSTATEs for a deadlock, a unique violation and a serialization
/// failure), as the engine's meanings: the event restarts. The native
/// tests ([`super::event`]) and Lua scripts ([`super::lua`]) both go by it.
pub(crate) const PGSQL_IGNORABLE: [Meaning; 3] = [
    Meaning::Deadlock,
    Meaning::DuplicateKey,
    Meaning::Serialization,
];
