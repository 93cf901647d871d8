-- Raises while it loads.
module:depends("http")
error("oops at load")
