-- Calls module:depends with the name in option "dep" and reports what happened.
module:depends("http")
local ok, err = pcall(module.depends, module, module:get_option("dep", "http"))
module:provides("http", {
	route = {
		["GET /"] = function() return tostring(ok) .. " " .. tostring(err) end,
	},
})
