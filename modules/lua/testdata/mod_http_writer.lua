module:depends("http")
local files = module:depends("http_files")
module:provides("http", {
	route = {
		["POST /add"] = function(event)
			local c = assert(cairn.add(event.request.body, "posted.txt"))
			assert(cairn.pin(c))
			return c .. " " .. cairn.cat("/ipfs/" .. c) .. " " .. tostring(cairn.stat(c).size)
		end,
		["GET /static/*"] = files.serve(module:get_option("dir", "/nonexistent")),
		["GET /wrapped/*"] = function(event, path)
			local h = files.serve({ path = module:get_option("dir", "/nonexistent") })
			return h(event, path)
		end,
	},
})
