//! Static exchange evaluation: what a capture wins or loses once both sides
//! have recaptured, for move ordering and pruning.

use crate::bitboard::Bitboard;
use crate::eval::SEE_VALUE;
use crate::moves::{Move, MoveKind};
use crate::position::Position;
use crate::types::{Role, Square};

impl Position {
    /// Static exchange evaluation: the material `mv` wins (positive) or loses
    /// (negative) if both sides then keep recapturing on its target square
    /// with their least valuable piece, each free to stop when continuing
    /// would lose. Pins and checks are ignored; x-ray attackers behind the
    /// capturing pieces join in as the line opens.
    pub fn see(&self, mv: Move) -> i32 {
        if mv.is_castle() {
            return 0;
        }
        let from = mv.from();
        let to = mv.to();
        let mut occupied = self.occupied().without(from);
        let captured = if mv.is_en_passant() {
            if let Some(sq) = Square::from_coords(to.file(), from.rank()) {
                occupied = occupied.without(sq);
            }
            SEE_VALUE[Role::Pawn.index()]
        } else {
            self.role_at(to).map_or(0, |r| SEE_VALUE[r.index()])
        };
        let mut on_target = self.role_at(from).map_or(0, |r| SEE_VALUE[r.index()]);
        let mut gain = [0i32; 34];
        gain[0] = captured;
        if let MoveKind::Promotion(role) = mv.kind() {
            let bonus = SEE_VALUE[role.index()] - SEE_VALUE[Role::Pawn.index()];
            gain[0] += bonus;
            on_target += bonus;
        }
        let mut side = !self.turn();
        let mut depth = 0;
        loop {
            depth += 1;
            // Speculative: what the side to capture gains if it takes the
            // piece now on the square and loses its own piece in return.
            gain[depth] = on_target - gain[depth - 1];
            // (No "neither side gains" early exit: it keeps the sign but
            // not the value, and ordering uses the value.)
            if depth + 1 >= gain.len() {
                break;
            }
            let attackers = self.attackers_to(to, occupied) & occupied & self.by_color(side);
            let Some((sq, role)) = self.least_valuable(attackers) else {
                break;
            };
            if role == Role::King {
                let defenders =
                    self.attackers_to(to, occupied.without(sq)) & occupied & self.by_color(!side);
                if defenders.any() {
                    break;
                }
            }
            occupied = occupied.without(sq);
            on_target = SEE_VALUE[role.index()];
            side = !side;
        }
        while depth > 1 {
            depth -= 1;
            gain[depth - 1] = -(-gain[depth - 1]).max(gain[depth]);
        }
        gain[0]
    }

    fn least_valuable(&self, attackers: Bitboard) -> Option<(Square, Role)> {
        Role::ALL.into_iter().find_map(|role| {
            (attackers & self.by_role(role))
                .first()
                .map(|sq| (sq, role))
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::position::Position;

    fn see(fen: &str, uci: &str) -> i32 {
        let pos = Position::from_fen(fen).expect("valid FEN");
        let mv = pos.parse_uci(uci).expect("legal move");
        pos.see(mv)
    }

    #[test]
    fn exchanges() {
        // Free pawn.
        assert_eq!(
            see("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5"),
            100
        );
        // Rook takes a pawn defended by a knight: loses the exchange.
        assert_eq!(
            see(
                "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1",
                "d3e5"
            ),
            100 - 320
        );
        // Pawn takes a defended knight: wins a knight for a pawn.
        assert_eq!(
            see("4k3/8/3p4/4n3/3P4/8/8/4K3 w - - 0 1", "d4e5"),
            320 - 100
        );
        // Quiet move to an attacked square loses the piece.
        assert_eq!(see("4k3/8/3p4/8/8/2B5/8/4K3 w - - 0 1", "c3e5"), -330);
        // X-ray: the rook behind the rook supports the capture.
        assert_eq!(see("4k3/3r4/8/8/3p4/8/3R4/3RK3 w - - 0 1", "d2d4"), 100);
        // Two rooks each: taking the pawn costs a rook for it.
        assert_eq!(see("3rk3/3r4/8/8/3p4/8/3R4/3RK3 w - - 0 1", "d2d4"), -400);
    }
}
