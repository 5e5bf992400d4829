//! The `redislock.*` php.ini entries: registered at startup from the list in
//! [`redislock_core::config::settings`], read from the engine on every use (so
//! `ini_set()` takes effect at once).

use std::ffi::CString;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use std::ffi::{c_int, c_void};

use ext_php_rs::ffi::{zend_ini_entry, zend_string};
use ext_php_rs::flags::IniEntryPermission;
use ext_php_rs::zend::{ExecutorGlobals, IniEntryDef};
use redislock_core::Result;
use redislock_core::config::settings::{self, Defaults};
use redislock_core::stats::Mode;

/// The registered table. The engine may keep a pointer to it for the life of
/// the process (PHP 8.5 reads it back), so it is built once and lives here,
/// reachable, with the names and defaults it points to.
static TABLE: OnceLock<Table> = OnceLock::new();

/// The entries, ended by [`IniEntryDef::end`].
struct Table(Box<[IniEntryDef]>);

// SAFETY: the table is never changed once built, and its pointers are to
// leaked (immutable, process-long) strings and to `accept`.
unsafe impl Send for Table {}
unsafe impl Sync for Table {}

/// Registers the entries (module startup).
pub fn register(module_number: i32) {
    let table = TABLE.get_or_init(build);
    IniEntryDef::register(&table.0, module_number);
}

fn build() -> Table {
    let leak = |s: &str| -> &'static std::ffi::CStr {
        Box::leak(
            CString::new(s)
                .expect("ini names and defaults have no NUL")
                .into_boxed_c_str(),
        )
    };
    let mut defs: Vec<IniEntryDef> = settings::ENTRIES
        .iter()
        .map(|(name, default)| {
            let mut def = IniEntryDef::new(leak(name), leak(default), IniEntryPermission::All);
            def.on_modify = Some(accept);
            def
        })
        .collect();
    let mut stats = IniEntryDef::new(
        leak(settings::STATS),
        leak(settings::STATS_DEFAULT),
        IniEntryPermission::System,
    );
    stats.on_modify = Some(stats_mode);
    defs.push(stats);
    defs.push(IniEntryDef::end());
    Table(defs.into_boxed_slice())
}

/// The settings are read (and validated) when a lock is built, so every
/// value is accepted here. The handler must exist: without one PHP refuses
/// to `ini_restore()` an entry at runtime.
unsafe extern "C" fn accept(
    _entry: *mut zend_ini_entry,
    _new_value: *mut zend_string,
    _arg1: *mut c_void,
    _arg2: *mut c_void,
    _arg3: *mut c_void,
    _stage: c_int,
) -> c_int {
    0
}

/// `redislock.stats` as read at startup.
static STATS_MODE: AtomicU8 = AtomicU8::new(Mode::Pool as u8);
/// A `redislock.stats` text that was not understood (the default was used).
static STATS_REFUSED: Mutex<Option<String>> = Mutex::new(None);

/// Reads `redislock.stats` (startup only: the entry is PHP_INI_SYSTEM). An
/// unknown word fails, and the engine then applies the default.
unsafe extern "C" fn stats_mode(
    _entry: *mut zend_ini_entry,
    new_value: *mut zend_string,
    _arg1: *mut c_void,
    _arg2: *mut c_void,
    _arg3: *mut c_void,
    _stage: c_int,
) -> c_int {
    // SAFETY: the engine passes a live zend_string (or null).
    let text = unsafe { new_value.as_ref() }.map_or(String::new(), |s| {
        // SAFETY: a zend_string's bytes are `len` long from `val`.
        let bytes = unsafe { std::slice::from_raw_parts(s.val.as_ptr().cast::<u8>(), s.len) };
        String::from_utf8_lossy(bytes).into_owned()
    });
    match Mode::parse(&text) {
        Some(mode) => {
            STATS_MODE.store(mode as u8, Ordering::Relaxed);
            0
        }
        None => {
            *STATS_REFUSED.lock().unwrap_or_else(|p| p.into_inner()) = Some(text);
            -1
        }
    }
}

/// The statistics mode php.ini asked for.
pub fn stats_mode_setting() -> Mode {
    Mode::from_u8(STATS_MODE.load(Ordering::Relaxed))
}

/// A `redislock.stats` text that was not understood, if any.
pub fn stats_refused() -> Option<String> {
    STATS_REFUSED
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
}

/// The current value of one ini setting, as the engine holds it (`None` if
/// it is not registered). The bytes are the engine's: use them before PHP
/// runs again.
fn raw(name: &str) -> Option<&'static [u8]> {
    let globals = ExecutorGlobals::get();
    // SAFETY: EG(ini_directives) is a live engine hash while PHP runs; its
    // values are pointers to zend_ini_entry structures owned by the engine,
    // unchanged until PHP code (ini_set) runs again.
    unsafe {
        let table = globals.ini_directives.as_ref()?;
        let entry = table.get(name)?.ptr::<zend_ini_entry>()?.as_ref()?;
        let value = entry.value.as_ref()?;
        Some(std::slice::from_raw_parts(
            value.val.as_ptr().cast::<u8>(),
            value.len,
        ))
    }
}

/// The current value of one ini setting (`None` if it is not registered).
pub fn get(name: &str) -> Option<String> {
    raw(name).map(|bytes| String::from_utf8_lossy(bytes).into_owned())
}

/// The defaults last read, with the settings' texts they were read from.
type Memo = Option<(Vec<Option<Vec<u8>>>, Defaults)>;

/// Lock defaults from the current settings. Nearly every lock of a process
/// is built with the same settings: the last result is kept, and reused
/// while the settings' texts are unchanged (compared in place, nothing
/// copied).
pub fn defaults() -> Result<Defaults> {
    static LAST: Mutex<Memo> = Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((texts, defaults)) = &*last
        && settings::ENTRIES
            .iter()
            .zip(texts)
            .all(|((name, _), seen)| raw(name) == seen.as_deref())
    {
        return Ok(defaults.clone());
    }
    let parsed = settings::defaults(get)?;
    let texts = settings::ENTRIES
        .iter()
        .map(|(name, _)| raw(name).map(<[u8]>::to_vec))
        .collect();
    *last = Some((texts, parsed.clone()));
    Ok(parsed)
}
