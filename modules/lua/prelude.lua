-- prelude.lua: the parts of cairn's module API written in Lua: util.set
-- and the typed option getters, following Prosody's definitions
-- (util/set.lua, core/moduleapi.lua). Run once in every new state with
-- (module, set_table) as arguments.
local module, set = ...

local set_mt = { __name = "set" }

-- "for x in s do" walks the items: the generic for calls s(nil, last).
function set_mt.__call(s, _, last)
	return next(s._items, last)
end

local function iterable_items()
	-- The items table can also be called as an iterator.
	return setmetatable({}, { __call = function(items, _, last) return next(items, last) end })
end

function set.new(list)
	local items = iterable_items()
	local s = { _items = items }
	function s:add(x) items[x] = true end
	function s:contains(x) return items[x] end
	function s:contains_set(other)
		for x in other do
			if not items[x] then return false end
		end
		return true
	end
	function s:items() return next, items end
	function s:remove(x) items[x] = nil end
	function s:add_list(list)
		if list then
			for _, x in ipairs(list) do items[x] = true end
		end
	end
	function s:include(other)
		for x in other do items[x] = true end
	end
	function s:exclude(other)
		for x in other do items[x] = nil end
	end
	function s:empty() return next(items) == nil end
	s:add_list(list)
	return setmetatable(s, set_mt)
end

function set.is_set(o) return getmetatable(o) == set_mt end

function set.union(a, b)
	local out = set.new()
	for x in pairs(a._items) do out._items[x] = true end
	for x in pairs(b._items) do out._items[x] = true end
	return out
end

function set.difference(a, b)
	local out = set.new()
	for x in pairs(a._items) do
		if not b._items[x] then out._items[x] = true end
	end
	return out
end

function set.intersection(a, b)
	local out = set.new()
	for x in pairs(a._items) do
		if b._items[x] then out._items[x] = true end
	end
	return out
end

function set.xor(a, b)
	return set.difference(set.union(a, b), set.intersection(a, b))
end

set_mt.__add = set.union
set_mt.__sub = set.difference
function set_mt.__div(s, f)
	local out = set.new()
	for x in pairs(s._items) do
		local y = f(x)
		if y ~= nil then out._items[y] = true end
	end
	return out
end
function set_mt.__eq(a, b)
	if getmetatable(a) ~= set_mt or getmetatable(b) ~= set_mt then return false end
	for x in pairs(a._items) do
		if not b._items[x] then return false end
	end
	for x in pairs(b._items) do
		if not a._items[x] then return false end
	end
	return true
end
function set_mt.__tostring(s)
	local parts = {}
	for x in pairs(s._items) do parts[#parts + 1] = tostring(x) end
	return "{" .. table.concat(parts, ", ") .. "}"
end

-- Typed option getters on top of module:get_option (a Go function).

function module:get_option_scalar(name, default)
	local v = self:get_option(name, default)
	if type(v) == "table" then
		if #v > 1 then
			self:log("error", "Config option '%s' does not take a list, using just the first item", name)
		end
		v = v[1]
	end
	return v
end

function module:get_option_string(name, default)
	local v = self:get_option_scalar(name, default)
	if v == nil then return nil end
	return tostring(v)
end

function module:get_option_number(name, default, min, max)
	local v = self:get_option_scalar(name, default)
	local n = tonumber(v)
	if v ~= nil and n == nil then
		self:log("error", "Config option '%s' not understood, expecting a number", name)
		return nil
	end
	if n == default then return n end
	if min and n < min then
		self:log("warn", "Config option '%s' out of bounds %g < %g", name, n, min)
		return min
	end
	if max and n > max then
		self:log("warn", "Config option '%s' out of bounds %g > %g", name, n, max)
		return max
	end
	return n
end

function module:get_option_integer(name, default, min, max)
	local n = self:get_option_number(name, default, min or -2 ^ 52, max or 2 ^ 53)
	if n == default or n == nil then return n end
	if n ~= math.floor(n) then
		self:log("warn", "Config option '%s' expected an integer, not a float (%g)", name, n)
		return math.floor(n)
	end
	return n
end

function module:get_option_boolean(name, ...)
	local v = self:get_option_scalar(name, ...)
	if v == nil then return nil end
	if v == true or v == "true" or v == 1 then return true end
	if v == false or v == "false" or v == 0 then return false end
	self:log("error", "Config option '%s' not understood, expecting true/false", name)
	return nil
end

function module:get_option_array(name, ...)
	local v = self:get_option(name, ...)
	if v == nil then return nil end
	if type(v) ~= "table" then return { v } end
	local copy = {}
	for i, x in ipairs(v) do copy[i] = x end
	return copy
end

function module:get_option_set(name, ...)
	local list = self:get_option_array(name, ...)
	if list == nil then return nil end
	return set.new(list)
end

local period_units = {
	second = 1, minute = 60, hour = 3600, day = 86400, week = 604800,
	month = 2629746, year = 31556952,
}

function module:get_option_period(name, default, min, max)
	local v = self:get_option_scalar(name, default)
	local secs
	if v == "never" or v == false then
		return math.huge
	elseif type(v) == "number" then
		secs = v
	elseif type(v) == "string" then
		local n, unit = v:match("^%s*(%d+%.?%d*)%s*(%a+)%s*$")
		unit = unit and unit:lower():gsub("s$", "")
		if n and period_units[unit] then
			secs = tonumber(n) * period_units[unit]
		else
			secs = tonumber(v)
		end
		if secs == nil then
			self:log("error", "Config option '%s' not understood, expecting a period (e.g. \"2 days\")", name)
			return nil
		end
	end
	if secs == nil then return nil end
	if min and secs < min then return min end
	if max and secs > max then return max end
	return secs
end
