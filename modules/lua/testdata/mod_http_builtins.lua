-- Work inside Go builtins: each route must stay within the caps.
module:depends("http")
local MiB = 1048576
module:provides("http", {
	route = {
		["GET /gsub"] = function() return (("x"):rep(MiB):gsub(".", ("y"):rep(256))) end,
		["GET /backtrack"] = function() return tostring(("a"):rep(30):find(("a*"):rep(10) .. "b")) end,
		["GET /lazy"] = function() return tostring(("x"):rep(MiB):find(".-y")) end,
		["GET /concat"] = function()
			local s, t = ("x"):rep(8 * MiB), {}
			for i = 1, 64 do t[i] = s end
			return table.concat(t)
		end,
		["GET /tail"] = function()
			local function f(n) return f(n + 1) end
			return f(1)
		end,
		["GET /tailpcall"] = function()
			local function f(n) return f(n + 1) end
			local ok, err = pcall(f, 1)
			return tostring(ok) .. tostring(err)
		end,
		["GET /format"] = function() return string.format("%1000000000d", 1) end,
		["GET /formats"] = function() local s = ("x"):rep(8 * MiB) return ("%s"):rep(64):format(s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s, s) end,
		["GET /upper"] = function()
			local s, t = ("x"):rep(20 * MiB), {}
			for i = 1, 64 do t[i] = s:upper() end
		end,
		["GET /rep"] = function() return ("xy"):rep(2^62) end,
		["GET /concatop"] = function()
			local s = ("x"):rep(8 * MiB)
			return s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s
		end,
		["GET /concatloop"] = function()
			local s = "x"
			for i = 1, 40 do s = s .. s end
			return s
		end,
		["GET /loadnest"] = function() return tostring(loadstring(("do "):rep(200000) .. ("end "):rep(200000))) end,
		["GET /loadfuncs"] = function()
			return tostring(loadstring("return " .. ("function() return "):rep(50000) .. "1" .. (" end"):rep(50000)))
		end,
		["GET /loadchain"] = function() return tostring(loadstring("return 1" .. (" .. 1"):rep(300000))) end,
		["GET /loadreader"] = function()
			local s, n = ("x"):rep(8 * MiB), 0
			return tostring(load(function() n = n + 1 if n <= 64 then return s end end))
		end,
		["GET /ok2"] = function()
			local mt = {__concat = function(a, b) return "<" .. tostring(type(a)) .. "," .. tostring(type(b)) .. ">" end}
			local t = setmetatable({}, mt)
			local function two() return "f", "g" end
			local f = loadstring("local a, b = ... return a .. '-' .. b .. 1.5")
			local bad, err = loadstring(("(x "):rep(300))
			return table.concat({"a" .. 1 .. 2, t .. "s", "s" .. t, 1 .. t .. 2, "x" .. two(), f("p", "q"), tostring(bad),
				err, tostring(pcall(function() return "a" .. {} end))}, "|")
		end,
		["GET /ok"] = function()
			local n = 0
			for w in ("one two  three"):gmatch("%a+") do n = n + #w end
			return ("%d %s %q %5.1f|%-3s|%x"):format(n, ("a,b,,c"):gsub(",", ";"), 'a"\n', 3.14159, "z", 255)
		end,
	},
})
