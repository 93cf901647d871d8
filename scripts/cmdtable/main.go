package main

import (
	"fmt"

	"cairn/httprpc"
)

func main() { fmt.Print(httprpc.READMETable()) }
