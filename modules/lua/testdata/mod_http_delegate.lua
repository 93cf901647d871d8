-- Headers set before delegating to serve() are kept;
-- serve(file) on an exact route, mime_map.
module:depends("http")
local files = require "net.http.files"
local dir = module:get_option_string("dir")
local one = files.serve(dir .. "/s.txt")
local tree = files.serve({ path = dir, mime_map = { txt = "text/x-custom" } })
module:provides("http", {
	route = {
		["GET /one"] = function(event)
			event.response.headers.cache_control = "no-store"
			event.response.headers.content_disposition = 'attachment; filename="s.txt"'
			return one(event)
		end,
		["GET /tree/*"] = function(event, path)
			event.response.headers.access_control_allow_origin = "*"
			return tree(event, path)
		end,
		["GET /exact"] = one,
	},
})
