-- Runaway code: each route must be stopped or contained.
module:depends("http")
local hoard = {}
module:provides("http", {
	route = {
		["GET /loop"] = function() while true do end end,
		["GET /error"] = function() error("oops from lua") end,
		["GET /alloc"] = function()
			local i = 0
			while true do
				i = i + 1
				hoard[i] = string.rep("x", 1048576) .. i
			end
		end,
		["GET /rep"] = function() return string.rep("x", 1e12) end,
		["GET /concat"] = function()
			local s = "xxxxxxxxxxxxxxxx"
			while true do s = s .. s end
		end,
		["GET /recurse"] = function()
			local function f(n) return 1 + f(n + 1) end
			return f(1)
		end,
		["GET /coroutine"] = function()
			local co = coroutine.wrap(function() while true do end end)
			co()
		end,
		["GET /count"] = function() return tostring(#hoard) end,
	},
})
