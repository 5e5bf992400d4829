//! The redislock section of `phpinfo()` / `php --ri redislock`.

use ext_php_rs::zend::ModuleEntry;
use ext_php_rs::{info_table_end, info_table_header, info_table_row, info_table_start};
use redislock_core::config::settings;

use crate::ini;

/// Prints version and settings; server passwords are masked.
pub extern "C" fn php_info(_module: *mut ModuleEntry) {
    // Output errors cannot be reported from here; a panic must not unwind
    // into the engine.
    let _ = std::panic::catch_unwind(|| {
        info_table_start!();
        info_table_row!("redislock support", "enabled");
        info_table_row!("Version", redislock_core::VERSION);
        info_table_row!(
            "Lock protocol",
            "SET NX PX + Lua compare-and-delete (EVALSHA)"
        );
        info_table_row!(
            "Request scope ends at",
            if crate::sapi_hook::installed() {
                "request shutdown, and the SAPI's deactivate (every HTTP request of a worker)"
            } else {
                "request shutdown"
            }
        );
        info_table_row!(
            "Pooled connections (this process)",
            redislock_core::idle_connections().to_string()
        );
        info_table_end!();
        info_table_start!();
        info_table_header!("Statistics (this process)", "Value");
        for (name, value) in crate::stats::rows() {
            info_table_row!(name, value.to_string());
        }
        info_table_end!();
        info_table_start!();
        info_table_header!("Directive", "Value");
        for (name, default) in settings::ENTRIES {
            let value = ini::get(name).unwrap_or_else(|| (*default).to_owned());
            info_table_row!(*name, settings::display(name, &value));
        }
        info_table_end!();
    });
}
