-- module:shared as Prosody's: one table per path, across modules, kept
-- when the module's state is rebuilt.
module:depends("http")
local http = require "net.http"
local counter = module:shared("counter") -- /*/http_share_a/counter
local global = module:shared("/cairn/global")

module:provides("http", {
	route = {
		["GET /inc"] = function()
			counter.n = (counter.n or 0) + 1
			return tostring(counter.n)
		end,
		["GET /identity"] = function()
			return tostring(module:shared("counter") == counter) .. " "
				.. tostring(module:shared("/*/http_share_a/counter") == counter) .. " "
				.. tostring(module:shared("/cairn/global") == global) .. " " .. type(counter)
		end,
		["POST /put"] = function(event)
			local form = http.formdecode(event.request.body)
			global[form.k] = form.v
			return "ok"
		end,
		["GET /nested"] = function()
			global.list = { "a", "b", { deep = true } }
			local l = global.list
			l[#l + 1] = "d"
			local keys = {}
			for k, v in pairs(l) do keys[#keys + 1] = tostring(k) .. "=" .. type(v) end
			local n = 0
			for i in ipairs(l) do n = i end
			local k1 = next(l)
			return table.concat(keys, ",") .. " #" .. #l .. " ipairs " .. n .. " next " .. tostring(k1)
				.. " " .. tostring(l[3].deep) .. " " .. tostring(global.list == l)
		end,
		["GET /refused"] = function()
			local ok, err = pcall(function() global.f = function() end end)
			local ok2, err2 = pcall(function() global[{}] = 1 end)
			return tostring(ok) .. " " .. err .. " | " .. tostring(ok2) .. " " .. err2
		end,
		["GET /full"] = function()
			local chunk = string.rep("x", 1024 * 1024)
			local ok, err, stored = true, nil, 0
			for i = 1, 100 do
				ok, err = pcall(function() global["big" .. i] = chunk .. i end)
				if not ok then break end
				stored = i
			end
			for i = 1, 100 do global["big" .. i] = nil end
			return tostring(ok) .. " " .. stored .. " " .. tostring(err)
		end,
		["GET /hog"] = function()
			local t = {}
			for i = 1, 1e9 do t[i] = string.rep("y", 1024 * 1024) .. i end
		end,
	},
})
