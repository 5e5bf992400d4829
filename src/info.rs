//! The redislock section of `phpinfo()` / `php --ri redislock`.

use ext_php_rs::zend::ModuleEntry;
use ext_php_rs::{info_table_end, info_table_header, info_table_row, info_table_start};
use redislock_core::config::settings;
use redislock_core::stats::{self, Mode, Scope};

use crate::ini;

/// What is counted, in words: the mode in force, and a setting that was
/// not understood.
fn stats_mode() -> String {
    let mode = stats::mode();
    let what = match mode {
        Mode::Pool => "pool (every process of this pool) and this process",
        Mode::Process => "this process only",
        Mode::Off => "nothing",
    };
    match ini::stats_refused() {
        Some(text) => format!(
            "{what} (redislock.stats = \"{text}\" is not pool, process or off: {} used)",
            mode.name()
        ),
        None if mode != ini::stats_mode_setting() => {
            format!("{what} (the pool's shared memory could not be mapped)")
        }
        None => what.to_owned(),
    }
}

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
        info_table_header!("Statistics", "Value");
        info_table_row!("Counted", stats_mode());
        info_table_end!();
        for (title, scope) in [
            ("Statistics (pool)", Scope::Pool),
            ("Statistics (this process)", Scope::Process),
        ] {
            info_table_start!();
            info_table_header!(title, "Value");
            for (name, value) in crate::stats::info_rows(scope) {
                info_table_row!(name, value);
            }
            info_table_end!();
        }
        info_table_start!();
        info_table_header!("Directive", "Value");
        for (name, default) in settings::ENTRIES {
            let value = ini::get(name).unwrap_or_else(|| (*default).to_owned());
            info_table_row!(*name, settings::display(name, &value));
        }
        info_table_row!(
            settings::STATS,
            ini::get(settings::STATS).unwrap_or_else(|| settings::STATS_DEFAULT.to_owned())
        );
        info_table_end!();
    });
}
