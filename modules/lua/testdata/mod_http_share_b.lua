module:depends("http")
local global = module:shared("/cairn/global")
local a_counter = module:shared("http_share_a/counter") -- a's, by its relative path

module:provides("http", {
	route = {
		["GET /get/*"] = function(event, k) return tostring(global[k]) end,
		["GET /acount"] = function() return tostring(a_counter.n) end,
	},
})
