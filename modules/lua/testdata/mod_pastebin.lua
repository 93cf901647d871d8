-- No http_ prefix: the app name stays "pastebin"; routes from globals.
route = { ["GET /"] = function() return "paste" end }
module:provides("http")
