package canon

import (
	"math/big"
	"strconv"
	"strings"
)

// Account is the canonical form of an IBAN or account number, as a bank
// reads it: its letters and digits, upper case ("xk05 1212–0123" is
// XK0512120123). An argument that spells an IBAN after a label ("IBAN
// XK05…") is the IBAN alone.
func Account(s string) string {
	id := Ident(s)
	if rest, ok := strings.CutPrefix(id, "iban"); ok {
		if shaped, _ := IBAN(rest); shaped {
			id = rest
		}
	}
	return strings.ToUpper(id)
}

// IBAN reports whether account (letters and digits, any case) has the
// shape of an IBAN (ISO 13616: two letters, two check digits, then 11 to
// 30 letters and digits) and, if so, whether its check digits hold (the
// number it spells is 1 modulo 97).
func IBAN(account string) (shaped, valid bool) {
	a := strings.ToUpper(account)
	if len(a) < 15 || len(a) > 34 || !letter(a[0]) || !letter(a[1]) || !digit(a[2]) || !digit(a[3]) {
		return false, false
	}
	var b strings.Builder
	r := a[4:] + a[:4]
	for i := 0; i < len(r); i++ {
		switch c := r[i]; {
		case digit(c):
			b.WriteByte(c)
		case letter(c):
			b.WriteString(strconv.Itoa(int(c-'A') + 10))
		default:
			return false, false
		}
	}
	n, ok := new(big.Int).SetString(b.String(), 10)
	return true, ok && new(big.Int).Mod(n, big.NewInt(97)).Int64() == 1
}

func letter(c byte) bool { return 'A' <= c && c <= 'Z' }
func digit(c byte) bool  { return '0' <= c && c <= '9' }
