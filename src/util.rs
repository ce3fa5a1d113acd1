//! Helpers below every other room, each in a file named for what it owns:
//! `clock.rs` (wall-clock stamps), `files.rs` (atomic writes, the outputs and
//! inputs the user names, config files), `host.rs` (this host and its
//! processes, from `/proc`), `par.rs` (work over the CPUs), `cpus.rs` (CPU
//! lists and pinning), `suggest.rs` ("did you mean" for names rqps checks).
//! The command lines rqps writes are `cmdline`'s, the client core `evloop`'s.

pub mod clock;
pub mod cpus;
pub mod files;
pub mod host;
pub mod par;
pub mod suggest;

pub use clock::{now_rfc3339, now_stamp};
pub use files::{
    ConfigError, InputError, MAX_CONFIG_BYTES, OUTPUT_MODE, OutputPath, check_output, file_safe,
    free_bytes, output_path, read_config, read_input, write_atomic, write_output,
    write_output_with,
};
pub use host::{hostname, process_start_time};
pub use par::par_map;
pub use suggest::did_you_mean;
