//! What callers pass in, validated: names, options, php.ini settings,
//! durations, server URLs, and PHP's numeric-string rules where values come as text.
//! Nothing here talks to Redis.

pub mod duration;
pub mod names;
pub mod options;
pub mod php_numeric;
pub mod settings;
pub mod url;
