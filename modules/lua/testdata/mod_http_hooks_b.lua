module:depends("http")

module:hook("greet", function(event)
	if event.name == "b" then return "b7 " .. event.name .. " " .. module.name end
end, 7)
module:hook("greet", function(event)
	if event.name == "boom" then error("boom in a hook") end
end, 9)
-- Fired by http_hooks_a; fires back into it while a's call is running.
module:hook("ping", function() return module:fire_event("pong", {}) end)

module:provides("http", {
	route = {
		["GET /fire-a"] = function()
			local e = { name = "from-b", list = { 1, 2 } }
			return tostring(module:fire_event("greet", e))
		end,
	},
})
