-- String work a page handler does: build, gsub, find, format, concat.
local parts = {}
for i = 1, 100000 do parts[#parts + 1] = string.format("<li>%d: %s</li>", i, ("x"):rep(i % 17)) end
local page = table.concat(parts, "\n")
local escaped, n = page:gsub("[<>&]", { ["<"] = "&lt;", [">"] = "&gt;", ["&"] = "&amp;" })
local count = 0
for _ in escaped:gmatch("&lt;li&gt;") do count = count + 1 end
print(#page, n, count, (escaped:find("99999", 1, true)))
