// Package config is the repo's config file: its Go type with Kubo 0.42's
// key names and cairn's own keys (Config), the one way between the JSON
// document and that type (Decode, Config.ToDoc), the profiles, the checks
// of values before a write, the size grammar, the defaults init writes,
// and the one write path of the file (Store). It imports nothing of
// node's; node holds a Store and adds the checks of its network settings.
//
// Start with config.go (the type), then document.go (the document the
// config commands edit, Decode, ToDoc) and store.go (every write).
//
//   - config.go: Config and its sections, Kubo's field by field; keys only
//     cairn has are tagged kubo:"-" (Budget, Modules, API.AllowUnauthenticated,
//     Swarm.Bandwidth).
//   - types.go: Kubo's value types (Flag, OptionalInteger, OptionalDuration,
//     OptionalString, OptionalBytes, Strings, ...) with WithDefault and
//     IsDefault.
//   - modules.go: the Modules section (cairn's module facility) and its
//     limits.
//   - document.go: ReadDoc, Decode, ToDoc, Normalize, FillMissing,
//     MergeDocs, CheckKey and the dotted-key helpers (GetKey, SetKeyExact,
//     ...).
//   - fastdecode.go: DecodeDoc, the decoder Decode tries first (encoding/json
//     only when it declines), which keeps the daemon's start-up memory low.
//   - defaults.go: DefaultConfig, DefaultDoc and defaultdoc.json, the same
//     document read without encoding/json's tables for the config type.
//   - profiles.go: Profiles (init --profile, config profile apply).
//   - check.go: CheckDoc, CheckValues, Identity.Keys and the parsers they use.
//   - size.go: ParseSize, the one size grammar of every size key.
//   - store.go: Store, the one write path (commitLocked under the Store's
//     lock), WriteFileAtomic (durable) and WriteFileReplace (atomic, not
//     synced: the api file).
//
// # Errors
//
// A value of the wrong JSON type fails Decode with Kubo's text ("failure
// to decode config: json: cannot unmarshal ..."); a key only cairn has
// fails with "invalid config: ...". A bad value of a key cairn reads
// fails CheckValues naming the key (a size: <key> "<value>": <why>).
//
// # Concurrency
//
// A Store serialises every write of its file and swaps the config in
// effect under one lock; the *Config it hands out is never modified
// afterwards. Commands that write without a running node (init, config
// edit) hold the repo lock and use a Store of their own.
package config
