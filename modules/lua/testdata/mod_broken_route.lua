module:provides("http", { route = { ["/nomethod"] = function() return "x" end } })
