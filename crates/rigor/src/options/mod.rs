//! Checked options: what the command line asked for, as values. Past this module nothing sees
//! clap; every flag that can be wrong has been checked here, with an error naming the flag.

pub mod compare;
pub mod load;
pub mod run;
pub mod store;
