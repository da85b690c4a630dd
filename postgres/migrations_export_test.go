package postgres

// Migrations is the number of embedded migrations, for the tests.
func Migrations() int {
	ms, err := migrations()
	if err != nil {
		panic(err)
	}
	return len(ms)
}
