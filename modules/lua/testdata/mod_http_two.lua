-- Two apps from one module.
module:depends("http")
module:provides("http", { name = "appone", route = { GET = function() return "app one" end } })
module:provides("http", { name = "apptwo", route = { GET = function() return "app two" end, ["GET /x"] = "two x" } })
