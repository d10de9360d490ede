package doristest

import "github.com/doris-sink/doris-sink/doris/doristest/internal/mysqlfront"

// DorisVersion is the Apache Doris release the emulator follows ("4.0.8").
// The FE reports it in @@version_comment ("Doris version
// doris-4.0.8-doristest") and the BE list (/rest/v1/system?path=/backends,
// column Version); VERSION() and @@version answer "5.7.99", as a real FE does.
const DorisVersion = mysqlfront.DorisRelease
