// Package flagtable holds, in its tests, the table of every flag the builders emit with the
// kcp releases that define it, and checks the builders' output against it at each release
// kcp-setups supports. It has no code of its own.
package flagtable
