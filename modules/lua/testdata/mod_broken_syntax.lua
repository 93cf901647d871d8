module:provides("http", { route = { ["GET"] = function() return "x" end }
