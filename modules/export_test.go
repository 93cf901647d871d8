package modules

// SelfSigned is selfSigned, for tests.
var SelfSigned = selfSigned
