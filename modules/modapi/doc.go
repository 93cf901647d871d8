// Package modapi is what a cairn module sees: the node view, the load
// context, the registry of built-in modules and the module event bus.
//
// Built-in modules register from init with [MustRegister]; the module
// host (package modules) loads the names listed in Modules.Enabled, calls
// [Module.Load] with a [Context], and calls [Unloader.Unload] when one is
// implemented. Lua modules (package modules/lua) are modules too.
//
// # Files
//
//   - modapi.go: NodeView and the values it returns, ReadOnly, Module,
//     Context, the registry (Register, Lookup, Builtins) and the directory-
//     index event's data.
//   - shared.go: the tables of module:shared.
package modapi
