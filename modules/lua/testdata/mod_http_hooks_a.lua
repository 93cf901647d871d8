-- module:hook / module:fire_event / module:unhook with Prosody's rules,
-- and a customised error page through the server's http-error event.
module:depends("http")
local server = require "net.http.server"
local log = {}

module:hook("greet", function(event) log[#log + 1] = "a0:" .. tostring(event.name) end)
module:hook("greet", function(event)
	if event.name ~= "low" then return "a5 hello " .. event.name end
end, 5)
local low = function() return "a-1" end
module:hook("greet", low, -1)
module:hook("count", function(event) event.n = event.n + 1 end, 1)
module:hook("count", function(event) return event.n end)
module:hook("pong", function() return "pong from " .. module.name end)

module:hook_object_event(server, "http-error", function(event)
	if event.code == 404 and event.request and event.request.path:match("^/hooks_a/") then
		event.response.headers.content_type = "text/plain"
		event.response.headers.x_from = module.name
		return "custom 404 for " .. event.request.path
	end
end, 10)

module:provides("http", {
	route = {
		["GET /fire/*"] = function(event, name)
			-- A hook's error comes through fire_event, as in Prosody.
			local ok, r = pcall(module.fire_event, module, "greet", { name = name })
			return ok and tostring(r) or ("error: " .. r)
		end,
		["GET /count"] = function()
			local e = { n = 1 }
			local r = module:fire_event("count", e)
			return r .. " " .. e.n
		end,
		["GET /ping"] = function() return tostring(module:fire_event("ping", {})) end,
		["GET /unhook"] = function() module:unhook("greet", low); return "ok" end,
		["GET /missing"] = function() return 404 end,
		["GET /log"] = function() return table.concat(log, ",") end,
		["GET /hog"] = function()
			local t = {}
			for i = 1, 1e9 do t[i] = string.rep("y", 1024 * 1024) .. i end
		end,
	},
})
