package mysqlfront

// DorisRelease is the Apache Doris release whose behaviour the emulator
// follows (docs/doris-facts.md). Every place the emulated FE or BE reports a
// version derives it from this one constant.
const DorisRelease = "4.0.8"

// DorisBuildVersion is the version string a Doris build reports
// (Version.DORIS_BUILD_VERSION + "-" + short hash, e.g.
// "doris-4.0.8-rc01-1a2b3c4d5e"); the emulator puts "doristest" where the
// commit hash goes.
const DorisBuildVersion = "doris-" + DorisRelease + "-doristest"

// MySQLServerVersion is what a Doris FE sends as server version in the
// handshake and answers to VERSION() and @@version (fe GlobalVariable
// version = "5.7.99"): clients take the FE for a MySQL 5.7 server.
const MySQLServerVersion = "5.7.99"
